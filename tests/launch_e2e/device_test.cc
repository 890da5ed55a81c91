// `radixserve launch ... device:=cuda`: where the machine has a GPU (and radixserve was built with
// the CUDA backend) the pipeline serves llama.cpp's greedy output of stories260K from the CUDA
// worker; everywhere else the launch ends with one clear error that says which of the two is
// missing, a non-zero exit code and nothing left running. Which case holds is asked of the CUDA
// runtime, the way the worker asks it, so the same test is right on both kinds of machine.
#include <gtest/gtest.h>

#include <string>

#include "tests/launch_e2e/launcher.h"
#include "tests/launch_e2e/requests.h"
#include "tests/pipeline/pipeline_fixture.h"
#if RADIXSERVE_HAVE_CUDA
#include "kernels/cuda/device.h"
#endif

namespace radixserve::launch_test {
namespace {

// The worker's own words for why device:=cuda cannot run here; "" where it can.
std::string WhyNoCuda() {
#if RADIXSERVE_HAVE_CUDA
  return cuda::DeviceCount() > 0 ? "" : "device:=cuda: no CUDA device";
#else
  return "device:=cuda: this radixserve was built without the CUDA backend";
#endif
}

TEST(LaunchDevice, CudaServesTheCpuGreedyOutputOrFailsNamingWhatIsMissing) {
  Launcher launcher;
  const LauncherOptions o =
      LaunchOf(LaunchDir() + "/edge.yaml", {"model:=" + pipeline_test::Stories260K(), "port:=0", "device:=cuda"});
  const std::string why = WhyNoCuda();
  if (why.empty()) {
    Status s = launcher.Start(o);
    ASSERT_TRUE(s.ok()) << s.message() << "\n" << launcher.Output();
    const auto golden = GoldenCases();
    ASSERT_FALSE(golden.empty());
    for (const auto& g : golden) EXPECT_EQ(GenerateIds(launcher.port(), g.prompt_ids, 32), g.completion_ids);
    return;
  }
  // The launcher's error line names the process; the cause is the worker's own error line.
  const std::string out = ExpectStartupFailure(launcher, o, {"'worker'"});
  const size_t at = out.find("[worker] error: ");
  ASSERT_NE(at, std::string::npos) << out;
  const std::string line = out.substr(at, out.find('\n', at) - at);
  EXPECT_NE(line.find(why), std::string::npos) << "expected \"" << why << "\" in: " << line << "\n" << out;
}

}  // namespace
}  // namespace radixserve::launch_test
