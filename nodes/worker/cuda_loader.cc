#include <dlfcn.h>

#include <filesystem>
#include <mutex>

#include "nodes/worker/cuda_module.h"

namespace radixserve::nodes {
namespace {

// The directory of the library this function is compiled into (the worker component's).
std::string OwnDirectory() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&OwnDirectory), &info) == 0 || info.dli_fname == nullptr) return ".";
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

}  // namespace

Result<std::unique_ptr<model::ModelBackend>> LoadCudaBackend(std::shared_ptr<const gguf::GgufFile> file,
                                                             const CudaBackendOptions& options) {
  static std::mutex mu;
  static CudaBackendLoadFn load = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (load == nullptr) {
      const std::string path = OwnDirectory() + "/" + kCudaBackendModule;
      // Kept open for the life of the process: backends it makes live until then.
      void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) return Status::NotFound("cannot load the CUDA backend " + path + ": " + ::dlerror());
      load = reinterpret_cast<CudaBackendLoadFn>(::dlsym(handle, kCudaBackendEntry));
      if (load == nullptr) return Status::InvalidArgument(path + " has no " + kCudaBackendEntry);
    }
  }
  Status status;
  model::ModelBackend* backend = load(file, options, &status);
  if (backend == nullptr) return status;
  return std::unique_ptr<model::ModelBackend>(backend);
}

}  // namespace radixserve::nodes
