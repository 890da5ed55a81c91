// Substitutions in launch-file scalars, in the spirit of ROS 2 launch:
//
//   $(var NAME)            the value of launch argument NAME (declared earlier, in scope)
//   $(env NAME)            environment variable NAME; an error when it is unset
//   $(env NAME DEFAULT)    environment variable NAME, or DEFAULT (the rest of the text) when unset
//
// Anything else starting with "$(" is an error (unknown substitution, unclosed
// parenthesis), so a typo never reaches a node as literal text. Substitutions
// do not nest, and a substituted value is not substituted again.
// Stateless functions; thread-safe (reads the environment).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/util/status.h"

namespace radixserve::launch {

// Launch argument values visible at one point of a launch file: name -> value.
using ArgValues = std::map<std::string, std::string>;

// Replaces every substitution in `text`. Errors say which substitution failed and why.
Result<std::string> Substitute(std::string_view text, const ArgValues& args);

}  // namespace radixserve::launch
