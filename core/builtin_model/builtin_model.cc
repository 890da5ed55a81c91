#include "core/builtin_model/builtin_model.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

extern "C" const unsigned char radixserve_builtin_model_begin[];
extern "C" const unsigned char radixserve_builtin_model_end[];

namespace radixserve::builtin_model {

std::string CacheDirectory() {
  if (const char* d = std::getenv("RADIXSERVE_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/radixserve";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/radixserve";
  return "/tmp/radixserve-cache";
}

std::span<const unsigned char> Bytes() {
  return {radixserve_builtin_model_begin, static_cast<size_t>(radixserve_builtin_model_end - radixserve_builtin_model_begin)};
}

namespace {

// True when `path` holds exactly the embedded bytes (a truncated or edited copy is rewritten).
bool HoldsEmbeddedModel(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) != Bytes().size() || ec) return false;
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return data.size() == Bytes().size() && std::equal(data.begin(), data.end(), Bytes().begin(),
                                                     [](char a, unsigned char b) { return static_cast<unsigned char>(a) == b; });
}

}  // namespace

Result<std::string> EnsureDefaultModel() {
  const std::string dir = CacheDirectory();
  const std::string path = dir + "/" + kName + ".gguf";
  if (HoldsEmbeddedModel(path)) return path;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("cannot create cache directory " + dir + ": " + ec.message());
  // Written under a per-process name and renamed: a concurrent reader never sees a partial file.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(Bytes().data()), static_cast<std::streamsize>(Bytes().size()));
    if (!out.good()) {
      std::filesystem::remove(tmp, ec);
      return Status::IOError("cannot write the built-in model to " + tmp);
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Status::IOError("cannot move the built-in model to " + path + ": " + ec.message());
  }
  return path;
}

}  // namespace radixserve::builtin_model
