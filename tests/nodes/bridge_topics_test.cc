// What a DDS bridge carries and how it meets its peer (nodes/bridge/bridge_topics.h): topic lists
// parse to the pipeline's topics or fail naming the bad entry, both hosts name a topic alike on
// DDS, and the Cyclone configuration for an interface and peers is built only from characters an
// interface name or address has.
#include <gtest/gtest.h>

#include "nodes/bridge/bridge_topics.h"

namespace radixserve::nodes {
namespace {

TEST(BridgeTopics, ListsParseToTopicsOfTheirNamespaceOrTheBridges) {
  auto t = ParseBridgeTopics(" dp1/requests, dp1/control ,status_x,,", "default");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ((*t)[0].ToString(), "/dp1/requests");
  EXPECT_EQ((*t)[1].ToString(), "/dp1/control");
  EXPECT_EQ((*t)[2].ToString(), "/default/status_x");
  EXPECT_TRUE(ParseBridgeTopics("", "default")->empty());
}

TEST(BridgeTopics, BadEntriesAreRefusedByName) {
  for (const char* bad : {"a/b/c", "/requests", "dp1/", "dp1/requests,dp1/requests"}) {
    auto t = ParseBridgeTopics(bad, "default");
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(ParseBridgeTopics("x,dp1/a/b", "d").status().message().find("'dp1/a/b'"), std::string::npos);
  EXPECT_NE(ParseBridgeTopics("dp1/q,dp1/q", "d").status().message().find("listed twice"), std::string::npos);
}

TEST(BridgeTopics, DdsNamesAreTheSameOnEveryHostAndKeepToDdsCharacters) {
  EXPECT_EQ(DdsTopicName({"dp1", "str_out"}), "radixserve/dp1/str_out");
  EXPECT_EQ(DdsTopicName({"edge-1", "requests"}), "radixserve/edge_1/requests");
}

TEST(BridgeTopics, CycloneConfigNamesTheInterfaceAndProbesThePeers) {
  auto none = DdsConfigXml("", "");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, "");  // Cyclone's own defaults (or CYCLONEDDS_URI)
  auto xml = DdsConfigXml("veth0", "10.0.0.2,10.0.0.3");
  ASSERT_TRUE(xml.ok());
  EXPECT_NE(xml->find("<NetworkInterface name=\"veth0\"/>"), std::string::npos) << *xml;
  EXPECT_NE(xml->find("<Peer address=\"10.0.0.2\"/><Peer address=\"10.0.0.3\"/>"), std::string::npos) << *xml;
  EXPECT_NE(xml->find("<AllowMulticast>false</AllowMulticast>"), std::string::npos) << *xml;
  auto multicast = DdsConfigXml("eth1", "");
  ASSERT_TRUE(multicast.ok());
  EXPECT_EQ(multicast->find("Peer"), std::string::npos);
  auto injected = DdsConfigXml("eth0\"/><Tracing>", "");
  ASSERT_FALSE(injected.ok());
  EXPECT_NE(injected.status().message().find("interface"), std::string::npos);
  EXPECT_FALSE(DdsConfigXml("", "10.0.0.2 10.0.0.3").ok());
}

}  // namespace
}  // namespace radixserve::nodes
