#include "nodes/worker/batch_handler.h"

#include "nodes/forward_codec.h"
#include "transport/messages.h"

namespace radixserve::nodes {

Result<BatchHandler::Outcome> BatchHandler::Handle(const void* data, size_t size) {
  RS_RETURN_IF_ERROR(Decode(data, size).status());
  return Finish(worker_->Forward(batch_, &result_));
}

Result<const sched::ForwardBatch*> BatchHandler::Decode(const void* data, size_t size) {
  RS_ASSIGN_OR_RETURN(const transport::ForwardBatchMsg* m, transport::ValidateForwardBatch(data, size));
  DecodeForwardBatch(m, &batch_);
  result_.batch_id = batch_.batch_id;
  result_.next_token_ids.clear();
  result_.logprobs.clear();
  return &batch_;
}

BatchHandler::Outcome BatchHandler::Finish(Status s) {
  if (!s.ok()) {  // the reply carries only the error: the scheduler fails the batch's requests
    result_.next_token_ids.clear();
    result_.logprobs.clear();
    result_.top_ids.clear();
    result_.top_logprobs.clear();
  }
  result_.batch_id = batch_.batch_id;
  result_.request_states = worker_->request_states();
  return Outcome{&result_, std::move(s)};
}

}  // namespace radixserve::nodes
