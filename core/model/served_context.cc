#include "core/model/served_context.h"

#include <algorithm>

namespace radixserve::model {

Result<int32_t> ModelContextLength(const gguf::GgufFile& file) {
  RS_ASSIGN_OR_RETURN(std::string arch, file.GetString("general.architecture"));
  RS_ASSIGN_OR_RETURN(int64_t ctx, file.GetInt(arch + ".context_length"));
  if (ctx <= 0 || ctx > (int64_t{1} << 30))
    return Status::InvalidArgument(file.name() + ": metadata " + arch + ".context_length must be positive, got " +
                                   std::to_string(ctx));
  return static_cast<int32_t>(ctx);
}

Result<int32_t> ServedContext(const gguf::GgufFile& file, int64_t requested) {
  RS_ASSIGN_OR_RETURN(int32_t model_ctx, ModelContextLength(file));
  if (requested < 0) return Status::InvalidArgument("context must be >= 0 (0: the default), got " + std::to_string(requested));
  if (requested == 0) return static_cast<int32_t>(std::min<int64_t>(model_ctx, kDefaultServedContext));
  if (requested > model_ctx)
    return Status::InvalidArgument("context " + std::to_string(requested) + " exceeds the model's context length " +
                                   std::to_string(model_ctx) + " (" + file.name() + ")");
  return static_cast<int32_t>(requested);
}

}  // namespace radixserve::model
