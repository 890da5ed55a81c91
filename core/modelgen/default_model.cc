#include "core/modelgen/default_model.h"

#include <cstdlib>
#include <filesystem>

#include "core/modelgen/model_generator.h"

namespace radixserve::modelgen {

std::string CacheDirectory() {
  if (const char* d = std::getenv("RADIXSERVE_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/radixserve";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/radixserve";
  return "/tmp/radixserve-cache";
}

Result<std::string> EnsureDefaultModel() {
  // The version in the name changes whenever the generator's output would.
  const std::string path = CacheDirectory() + "/default-tiny-f32-v1.gguf";
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return path;
  std::filesystem::create_directories(CacheDirectory(), ec);
  if (ec) return Status::IOError("cannot create cache directory " + CacheDirectory() + ": " + ec.message());
  RS_ASSIGN_OR_RETURN(ModelSpec spec, SpecForSize("tiny"));
  RS_RETURN_IF_ERROR(GenerateModel(spec, path));
  return path;
}

}  // namespace radixserve::modelgen
