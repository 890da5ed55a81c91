// Pipeline parallelism: which contiguous range of layers each stage holds.
// Stage `rank` of `size` gets layers [begin, end); the split is as even as the
// layer count allows, and where it cannot be even the later stages get one
// layer more (the earlier ones also wait least for their input). Stateless.
#pragma once

#include "core/util/status.h"

namespace radixserve::model {

struct StageLayers {
  int begin = 0;
  int end = 0;  // exclusive
};

// InvalidArgument when rank is not in [0, size) or there are fewer layers than stages.
Result<StageLayers> PipelineStageLayers(int num_layers, int rank, int size);

}  // namespace radixserve::model
