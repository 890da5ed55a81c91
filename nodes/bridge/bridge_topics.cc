#include "nodes/bridge/bridge_topics.h"

#include <cctype>
#include <set>
#include <sstream>

namespace radixserve::nodes {

Result<std::vector<transport::Topic>> ParseBridgeTopics(const std::string& list, const std::string& default_ns) {
  std::vector<transport::Topic> out;
  std::set<std::string> seen;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.erase(item.begin());
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.pop_back();
    if (item.empty()) continue;
    transport::Topic t;
    const size_t slash = item.find('/');
    if (slash == std::string::npos) {
      t = {default_ns, item};
    } else if (item.find('/', slash + 1) != std::string::npos || slash == 0 || slash + 1 == item.size()) {
      return Status::InvalidArgument("bridge topic '" + item + "' is neither 'name' nor 'namespace/name'");
    } else {
      t = {item.substr(0, slash), item.substr(slash + 1)};
    }
    RS_RETURN_IF_ERROR(transport::ValidateTopic(t));
    if (!seen.insert(t.ToString()).second)
      return Status::InvalidArgument("bridge topic '" + item + "' is listed twice");
    out.push_back(std::move(t));
  }
  return out;
}

std::string DdsTopicName(const transport::Topic& t) {
  std::string name = std::string(transport::kServiceName) + "/" + t.ns + "/" + t.name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '/') c = '_';
  return name;
}

Result<std::string> DdsConfigXml(const std::string& interface, const std::string& peers) {
  auto plain = [](const std::string& s, const char* what) -> Status {
    for (char c : s)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != ':' && c != '-' && c != '_' && c != ',' &&
          c != '[' && c != ']')
        return Status::InvalidArgument(std::string(what) + " '" + s + "' has a character ('" + std::string(1, c) +
                                       "') that is not part of an interface name or address");
    return Status::Ok();
  };
  RS_RETURN_IF_ERROR(plain(interface, "interface"));
  RS_RETURN_IF_ERROR(plain(peers, "peer"));
  if (interface.empty() && peers.empty()) return std::string();
  std::string xml = "<CycloneDDS><Domain Id=\"any\"><General>";
  if (!interface.empty()) xml += "<Interfaces><NetworkInterface name=\"" + interface + "\"/></Interfaces>";
  if (!peers.empty()) xml += "<AllowMulticast>false</AllowMulticast>";
  xml += "</General>";
  if (!peers.empty()) {
    // Unicast discovery: each peer is probed at the ports of the first participant indices.
    xml += "<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex><Peers>";
    std::stringstream ss(peers);
    for (std::string p; std::getline(ss, p, ',');)
      if (!p.empty()) xml += "<Peer address=\"" + p + "\"/>";
    xml += "</Peers></Discovery>";
  }
  return xml + "</Domain></CycloneDDS>";
}

}  // namespace radixserve::nodes
