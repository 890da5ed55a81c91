// Sends and receives Protobuf control messages inside ControlMsg chunks.
// Stateless helpers; the caller serialises access to the publisher.
#pragma once

#include <google/protobuf/message_lite.h>

#include "core/util/status.h"
#include "transport/channel.h"
#include "transport/messages.h"

namespace radixserve::transport {

Status PublishControl(Publisher& pub, const google::protobuf::MessageLite& msg);
// Validates the chunk and parses its payload into *msg.
Status ParseControl(const void* data, size_t size, google::protobuf::MessageLite* msg);

}  // namespace radixserve::transport
