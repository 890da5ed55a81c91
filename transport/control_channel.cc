#include "transport/control_channel.h"

namespace radixserve::transport {

Status PublishControl(Publisher& pub, const google::protobuf::MessageLite& msg) {
  size_t n = msg.ByteSizeLong();
  size_t bytes = MessageSize<ControlMsg>({n});
  RS_ASSIGN_OR_RETURN(void* chunk, pub.Loan(bytes));
  MessageWriter<ControlMsg> w(chunk, bytes);
  auto body = w.Append<uint8_t>(w.msg()->payload, n);
  if (body.size() != n || !msg.SerializeToArray(body.data(), static_cast<int>(n))) {
    pub.Release(chunk);
    return Status::Internal("cannot serialise a control message");
  }
  pub.Publish(chunk);
  return Status::Ok();
}

Status ParseControl(const void* data, size_t size, google::protobuf::MessageLite* msg) {
  RS_ASSIGN_OR_RETURN(const ControlMsg* m, ValidateControl(data, size));
  auto body = ArrayOf<uint8_t>(m, m->payload);
  if (!msg->ParseFromArray(body.data(), static_cast<int>(body.size())))
    return Status::Corrupt("control message payload is not a valid Protobuf message");
  return Status::Ok();
}

}  // namespace radixserve::transport
