// Start-up failures of `radixserve launch`: a missing model file, a port already in use, and a
// running RouDi too small for the model each end with one clear message, a non-zero exit code,
// and no process or shared memory left behind.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/launch_e2e/launcher.h"
#include "tests/launch_e2e/requests.h"
#include "tests/pipeline/http_client.h"
#include "tests/pipeline/pipeline_fixture.h"
#include "transport/roudi_process.h"

namespace radixserve::launch_test {
namespace {

namespace fs = std::filesystem;

TEST(LaunchStartupFailure, MissingModelFile) {
  Launcher launcher;
  const std::string missing = "/no/such/dir/model.gguf";
  ExpectStartupFailure(launcher, LaunchOf(LaunchDir() + "/edge.yaml", {"model:=" + missing, "port:=0"}), {missing});
  EXPECT_FALSE(fs::exists("/dev/shm/iceoryx_mgmt") && !pipeline_test::RouDiPresent());
}

TEST(LaunchStartupFailure, PortAlreadyInUse) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::string port = std::to_string(ntohs(a.sin_port));
  Launcher launcher;
  std::string out = ExpectStartupFailure(
      launcher, LaunchOf(LaunchDir() + "/edge.yaml", {"model:=" + pipeline_test::Stories260K(), "port:=" + port}),
      {"'api'"});
  // The launcher's last line names the process; the cause is the api node's own error line.
  EXPECT_NE(out.find("[api] error: api: activate failed: cannot listen on 127.0.0.1:" + port +
                     ": Address already in use"),
            std::string::npos)
      << out;
  ::close(fd);
}

TEST(LaunchStartupFailure, RunningRouDiTooSmall) {
  Launcher launcher;  // first: it makes the test a subreaper and cleans up whatever is left
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (pipeline_test::RouDiPresent() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_FALSE(pipeline_test::RouDiPresent()) << "another RouDi kept running";

  const std::string toml = (fs::temp_directory_path() / ("radixserve_small_roudi_" + std::to_string(::getpid()) +
                                                         ".toml")).string();
  std::ofstream(toml) << "[general]\nversion = 1\n\n[[segment]]\n\n[[segment.mempool]]\nsize = 1024\ncount = 64\n";
  pid_t roudi = ::fork();
  ASSERT_GE(roudi, 0);
  if (roudi == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDOUT_FILENO);
    ::execlp("iox-roudi", "iox-roudi", "-c", toml.c_str(), "-l", "warning", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_TRUE(pipeline_test::WaitFor([] { return transport::RouDiRunning() && fs::exists("/tmp/roudi"); },
                                     std::chrono::seconds(20)))
      << "iox-roudi -c small.toml did not start";

  LauncherOptions o = LaunchOf(LaunchDir() + "/edge.yaml", {"model:=" + pipeline_test::Stories260K(), "port:=0"});
  o.wait_for_other_roudi = false;
  ExpectStartupFailure(launcher, o, {"too small for this model"}, {roudi});

  ::kill(roudi, SIGTERM);
  int st = 0;
  ::waitpid(roudi, &st, 0);
  if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) transport::RemoveRouDiLeftovers();
  EXPECT_EQ(launcher.Leftovers(), "");
  fs::remove(toml);
}

}  // namespace
}  // namespace radixserve::launch_test
