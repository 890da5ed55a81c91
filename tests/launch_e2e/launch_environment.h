// LaunchEnvironment: one launched pipeline for a whole test program (a gtest
// Environment), for acceptance tests that share it and run in order. SetUp
// starts `radixserve launch` with the options the subclass gives; TearDown
// stops it the way a user does (SIGTERM), expects a clean exit and nothing
// left over, and prints the launcher's output when a test failed.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "tests/launch_e2e/launcher.h"

namespace radixserve::launch_test {

class LaunchEnvironment : public ::testing::Environment {
 public:
  void SetUp() override;
  void TearDown() override;
  Launcher& launcher() { return *launcher_; }

 protected:
  // What to launch; called once by SetUp (a failed assertion in it stops the start).
  virtual LauncherOptions Options() = 0;

 private:
  std::unique_ptr<Launcher> launcher_;
};

}  // namespace radixserve::launch_test
