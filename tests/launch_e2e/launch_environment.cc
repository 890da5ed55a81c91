#include "tests/launch_e2e/launch_environment.h"

#include <signal.h>
#include <sys/wait.h>

#include <cstdio>

namespace radixserve::launch_test {

void LaunchEnvironment::SetUp() {
  const LauncherOptions options = Options();
  if (::testing::Test::HasFatalFailure()) return;
  launcher_ = std::make_unique<Launcher>();
  Status s = launcher_->Start(options);
  ASSERT_TRUE(s.ok()) << s.message();
}

void LaunchEnvironment::TearDown() {
  if (!launcher_) return;
  launcher_->Signal(SIGTERM);
  std::optional<int> st = launcher_->WaitExit(std::chrono::seconds(60));
  EXPECT_TRUE(st && WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << launcher_->Output();
  EXPECT_EQ(launcher_->Leftovers(), "");
  if (::testing::UnitTest::GetInstance()->Failed())
    std::fprintf(stderr, "launcher output:\n%s\n", launcher_->Output().c_str());
  launcher_.reset();
}

}  // namespace radixserve::launch_test
