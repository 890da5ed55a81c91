#include "core/model/pipeline_stage.h"

#include <string>

namespace radixserve::model {

Result<StageLayers> PipelineStageLayers(int num_layers, int rank, int size) {
  if (size < 1 || rank < 0 || rank >= size)
    return Status::InvalidArgument("pipeline stage " + std::to_string(rank) + " is not in [0, " +
                                   std::to_string(size) + ")");
  if (num_layers < size)
    return Status::InvalidArgument("a model of " + std::to_string(num_layers) + " layers cannot be split into " +
                                   std::to_string(size) + " pipeline stages");
  // Stage r starts at floor(r * L / P): the remainder lands on the later stages.
  auto start = [&](int r) { return static_cast<int>(static_cast<int64_t>(r) * num_layers / size); };
  return StageLayers{start(rank), start(rank + 1)};
}

}  // namespace radixserve::model
