// Which topics a bridge carries: the parameter lists of the bridge node
// ("dp1/requests,dp1/control": a topic of another namespace, or a bare name in
// the bridge's own), and the name each has on DDS. Every bridge names a topic
// the same way, so that both ends of a link meet on it. Stateless.
#pragma once

#include <string>
#include <vector>

#include "core/util/status.h"
#include "transport/topic.h"

namespace radixserve::nodes {

// Parses a comma-separated list; a bare name is in `default_ns`. Errors name the bad entry.
Result<std::vector<transport::Topic>> ParseBridgeTopics(const std::string& list, const std::string& default_ns);

// The DDS topic of an iceoryx topic: "radixserve/<ns>/<name>" with characters DDS does not take
// in a topic name replaced by '_'.
std::string DdsTopicName(const transport::Topic& t);

// Cyclone DDS configuration for a bridge that talks over `interface` (empty: Cyclone's choice)
// to the hosts in `peers` (comma-separated addresses; empty: multicast discovery), with unicast
// discovery when peers are given. Empty when both are empty (Cyclone's defaults). InvalidArgument
// for characters that do not belong in an interface name or an address.
Result<std::string> DdsConfigXml(const std::string& interface, const std::string& peers);

}  // namespace radixserve::nodes
