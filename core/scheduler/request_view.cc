#include "core/scheduler/request_view.h"

#include "core/scheduler/req.h"

namespace radixserve::sched {

uint64_t RequestView::rid() const { return req_->rid; }
int32_t RequestView::input_len() const { return req_->input_len; }
int32_t RequestView::output_len() const { return req_->output_len(); }
int32_t RequestView::seq_len() const { return req_->seq_len(); }
std::span<const int32_t> RequestView::tokens() const { return req_->tokens; }
int32_t RequestView::prefix_len() const { return static_cast<int32_t>(req_->prefix_indices.size()); }
int32_t RequestView::max_new_tokens() const { return req_->max_new_tokens(); }
bool RequestView::has_priority() const { return req_->spec.priority.has_value(); }
int64_t RequestView::priority() const { return req_->spec.priority.value_or(0); }
std::string_view RequestView::routing_key() const { return req_->spec.routing_key; }
std::string_view RequestView::cache_salt() const { return req_->spec.cache_salt; }
uint64_t RequestView::arrival_seq() const { return req_->arrival_seq; }
double RequestView::wait_entry_time() const { return req_->wait_entry_time; }
int64_t RequestView::arrival_processed_tokens() const { return req_->arrival_processed_tokens; }
int32_t RequestView::retraction_count() const { return req_->retraction_count; }

}  // namespace radixserve::sched
