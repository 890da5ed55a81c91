// The hot-path messages of the pipeline (ARCHITECTURE section 4), as
// fixed-layout structs with trailing arrays (see message_layout.h).
//
//   api ──TokenizedRequestMsg / AbortRequestMsg──► scheduler ──ForwardBatchMsg──► worker
//   worker ──ForwardResultMsg──► scheduler ──BatchTokenIdOutMsg──► detokenizer ──BatchStrOutMsg──► api
//   every node ──NodeStatusMsg──► whoever watches (api, launcher)
//   scheduler ──CacheEventsMsg──► a data-parallel router (the api node)
//   pipeline stage r ──ActivationsMsg──► stage r + 1 (the last stage answers with ForwardResultMsg)
//
// Each Validate* checks the header and every array against the received size and the limits
// below before anything is read; a message that fails is logged and dropped, never trusted.
// Each message with arrays says once what they hold: its Counts (elements per array) and Bytes()
// (the chunk size for those counts) serve the writer (actual counts) and RouDi's sizing (worst
// cases, launch/roudi_sizing.cc) alike.
#pragma once

#include <cstdint>

#include "core/sampling/sampling_params.h"
#include "core/util/finish_reason.h"
#include "transport/message_layout.h"

namespace radixserve::transport {

// Limits that bound every array a reader accepts.
inline constexpr uint32_t kMaxTokensPerMessage = 1u << 22;
inline constexpr uint32_t kMaxRequestsPerBatch = 1u << 14;
inline constexpr uint32_t kMaxStopStrings = 64;
inline constexpr uint32_t kMaxTextBytes = 1u << 24;
inline constexpr uint32_t kMaxTopLogprobs = 20;
inline constexpr uint32_t kMaxKeyBytes = 4096;  // a cache salt or a routing key
inline constexpr uint32_t kMaxGrammarBytes = 1u << 20;  // one request's grammar text (GrammarLimits)
inline constexpr uint8_t kMaxGrammarKind = 6;  // grammar::GrammarKind::kStructural (pinned in nodes/request_codec.cc)
inline constexpr uint8_t kMaxCacheEventKind = 2;  // sched::CacheEvent::Kind::kCleared

static_assert(std::is_trivially_copyable_v<SamplingParams>);

struct TokenizedRequestMsg {
  static constexpr MessageKind kKind = MessageKind::kTokenizedRequest;
  static constexpr uint16_t kLayoutVersion = 3;  // 3: the grammar (structured output)
  MessageHeader header;
  uint64_t rid;
  SamplingParams sampling;
  uint8_t stream;
  uint8_t return_logprob;
  uint8_t has_priority;
  uint8_t grammar_kind;    // grammar::GrammarKind; 0 = unconstrained
  int32_t top_logprobs_num;
  int64_t priority;
  double arrival_time;     // seconds on CLOCK_MONOTONIC (same machine)
  ArrayRef input_ids;      // int32
  ArrayRef stop_token_ids; // int32
  ArrayRef stop_str_bytes; // char: the stop strings back to back
  ArrayRef stop_str_lens;  // uint32: the length of each stop string
  ArrayRef cache_salt;     // char: the prefix-cache namespace (empty: shared)
  ArrayRef routing_key;    // char (empty: none)
  ArrayRef grammar_text;   // char: the grammar's text (grammar::GrammarSpec::text)

  struct Counts {
    uint64_t input_ids = 0, stop_token_ids = 0, stop_str_bytes = 0, stop_strs = 0;
    uint64_t cache_salt_bytes = 0, routing_key_bytes = 0, grammar_bytes = 0;
  };
  static constexpr size_t Bytes(const Counts& c);
};

struct AbortRequestMsg {
  static constexpr MessageKind kKind = MessageKind::kAbortRequest;
  static constexpr uint16_t kLayoutVersion = 1;
  MessageHeader header;
  uint64_t rid;
  uint8_t abort_all;
  uint8_t reserved[7];
};

// One request of a forward batch (mirrors sched::ForwardReq).
struct ForwardReqWire {
  uint64_t rid;
  int32_t row;
  int32_t sync_begin;
  int32_t prefix_offset;
  int32_t prefix_len;
  int32_t extend_len;
  int32_t token_offset;
  uint8_t sample;
  uint8_t return_logprob;
  uint8_t new_state;        // create the request's state at this step (sched::ForwardReq::new_state)
  uint8_t grammar_kind;     // grammar::GrammarKind of a new_state request; 0 = unconstrained
  int32_t top_logprobs_num;
  uint32_t history_offset;  // into history_ids: the penalty history of a new_state request
  uint32_t history_len;
  uint32_t grammar_offset;  // into grammar_text: a new_state request's grammar
  uint32_t grammar_len;
  int32_t output_begin;     // where the output starts in (history, this step's inputs); -1: unknown
  uint32_t reserved;
  SamplingParams sampling;
};

struct ForwardBatchMsg {
  static constexpr MessageKind kKind = MessageKind::kForwardBatch;
  static constexpr uint16_t kLayoutVersion = 3;  // 2: request lifetime in the batch (new_state); 3: grammars
  MessageHeader header;
  uint64_t batch_id;
  uint8_t mode;  // sched::ForwardMode
  uint8_t reserved[7];
  ArrayRef reqs;           // ForwardReqWire
  ArrayRef input_ids;      // int32, Σ extend_len
  ArrayRef out_cache_loc;  // int32, Σ extend_len
  ArrayRef prefix_slots;   // int32, row patches
  ArrayRef released_rids;  // uint64: requests whose worker-side state is dropped after this step
  ArrayRef history_ids;    // int32: see ForwardReqWire::history_offset
  ArrayRef grammar_text;   // char: the grammars of new_state requests, back to back

  struct Counts {
    uint64_t reqs = 0, tokens = 0, prefix_slots = 0, released_rids = 0, history_ids = 0;  // tokens: input ids = slots
    uint64_t grammar_bytes = 0;
  };
  static constexpr size_t Bytes(const Counts& c);
};

struct ForwardResultMsg {
  static constexpr MessageKind kKind = MessageKind::kForwardResult;
  static constexpr uint16_t kLayoutVersion = 2;
  MessageHeader header;
  uint64_t batch_id;
  int32_t status_code;     // 0 ok; otherwise StatusCode and `error` holds the message
  int32_t top_n;           // entries per request in top_ids / top_logprobs
  uint32_t request_states; // per-request sampling states the worker holds after this step
  uint32_t reserved;
  ArrayRef next_token_ids; // int32, one per request
  ArrayRef logprobs;       // float, one per request or empty
  ArrayRef top_ids;        // int32, top_n per request or empty
  ArrayRef top_logprobs;   // float, top_n per request or empty
  ArrayRef error;          // char

  static constexpr size_t kMaxErrorBytes = 4096;  // a longer worker error is cut
  struct Counts {
    uint64_t reqs = 0, logprobs = 0, top = 0, error_bytes = 0;  // top: top_n × requests
  };
  static constexpr size_t Bytes(const Counts& c);
};

static_assert(sizeof(FinishKind) == 1, "OutputEntry::finish_kind carries a FinishKind in one byte");

// Per-request entry of BatchTokenIdOutMsg and BatchStrOutMsg.
struct OutputEntry {
  uint64_t rid;
  uint8_t finished;
  uint8_t finish_kind;      // FinishKind (core/util/finish_reason.h)
  uint8_t skip_special_tokens;
  uint8_t no_stop_trim;
  int32_t matched_token;
  int32_t finish_length;
  int32_t status_code;
  int32_t prompt_tokens;
  int32_t completion_tokens;
  int32_t cached_tokens;
  int32_t read_offset;      // token-id output: position in decode_ids where new text starts
  uint32_t ids_offset;      // token-id output: decode_ids; string output: output_ids
  uint32_t ids_count;
  uint32_t out_ids_offset;  // token-id output: new output ids
  uint32_t out_ids_count;
  uint32_t logprob_offset;  // into logprobs (one per new output token)
  uint32_t logprob_count;
  uint32_t text_offset;     // string output: the text delta; both: finish text after it
  uint32_t text_len;
  uint32_t finish_text_offset;  // matched stop string or abort message
  uint32_t finish_text_len;
  uint32_t top_offset;      // into top_ids / top_logprobs: top_n entries per new output token
  uint32_t top_count;
  int32_t top_n;
  uint32_t reserved;
};

struct BatchTokenIdOutMsg {
  static constexpr MessageKind kKind = MessageKind::kBatchTokenIdOut;
  static constexpr uint16_t kLayoutVersion = 2;
  MessageHeader header;
  ArrayRef entries;    // OutputEntry
  ArrayRef ids;        // int32: decode_ids of each entry
  ArrayRef out_ids;    // int32: new output ids of each entry
  ArrayRef logprobs;   // float
  ArrayRef text;       // char: finish texts
  ArrayRef top_ids;    // int32: top alternatives (-1 pads)
  ArrayRef top_logprobs;  // float

  struct Counts {
    uint64_t entries = 0, ids = 0, out_ids = 0, logprobs = 0, text_bytes = 0, top = 0;
  };
  static constexpr size_t Bytes(const Counts& c);
};

struct BatchStrOutMsg {
  static constexpr MessageKind kKind = MessageKind::kBatchStrOut;
  static constexpr uint16_t kLayoutVersion = 2;
  MessageHeader header;
  ArrayRef entries;    // OutputEntry
  ArrayRef ids;        // int32: new output ids of each entry
  ArrayRef out_ids;    // unused (kept for a shared entry layout)
  ArrayRef logprobs;   // float
  ArrayRef text;       // char: text deltas and finish texts
  ArrayRef top_ids;    // int32: top alternatives (-1 pads)
  ArrayRef top_logprobs;  // float

  struct Counts {
    uint64_t entries = 0, ids = 0, logprobs = 0, text_bytes = 0, top = 0;
  };
  static constexpr size_t Bytes(const Counts& c);
};

struct NodeStatusMsg {
  static constexpr MessageKind kKind = MessageKind::kNodeStatus;
  static constexpr uint16_t kLayoutVersion = 1;
  MessageHeader header;
  char name[64];
  char component[32];
  uint8_t state;  // nodes::NodeState
  uint8_t ready;
  uint8_t reserved[2];
  int32_t pid;
  double timestamp;  // CLOCK_MONOTONIC seconds
};

// One prefix-cache change (sched::CacheEvent) inside a CacheEventsMsg.
struct CacheEventWire {
  uint8_t kind;  // sched::CacheEvent::Kind
  uint8_t reserved[3];
  int32_t changed;        // trailing tokens stored or removed
  uint32_t tokens_offset; // into `tokens`: the key from its namespace's root
  uint32_t tokens_count;
  uint32_t ns_offset;     // into `ns_bytes`: the cache salt
  uint32_t ns_len;
};

// The cache events of one scheduler iteration, in the order they happened. `epoch` names the
// scheduler instance (a restarted one starts with an empty cache and a new epoch) and `seq`
// counts its messages from 1, so that a reader can tell a lost message from none.
struct CacheEventsMsg {
  static constexpr MessageKind kKind = MessageKind::kCacheEvents;
  static constexpr uint16_t kLayoutVersion = 1;
  static constexpr size_t kTargetBytes = 64 * 1024;  // a writer flushes once past this
  MessageHeader header;
  uint64_t epoch;
  uint64_t seq;
  ArrayRef events;    // CacheEventWire
  ArrayRef tokens;    // int32
  ArrayRef ns_bytes;  // char

  struct Counts {
    uint64_t events = 0, tokens = 0, ns_bytes = 0;
  };
  static constexpr size_t Bytes(const Counts& c);
};

// One pipeline stage's output for one forward batch: the residual stream after its last layer for
// the batch's new tokens ([tokens][dim]), which the next stage goes on from. A stage whose step
// failed sends the error instead, and the last stage answers the scheduler with it.
struct ActivationsMsg {
  static constexpr MessageKind kKind = MessageKind::kActivations;
  static constexpr uint16_t kLayoutVersion = 1;
  MessageHeader header;
  uint64_t batch_id;
  int32_t status_code;  // 0 ok; otherwise StatusCode and `error` holds the message
  uint32_t dim;         // floats per token
  ArrayRef hidden;      // float, tokens × dim
  ArrayRef error;       // char

  static constexpr size_t kMaxErrorBytes = 4096;  // a longer stage error is cut
  static constexpr uint32_t kMaxDim = 1u << 16;
  struct Counts {
    uint64_t floats = 0, error_bytes = 0;
  };
  static constexpr size_t Bytes(const Counts& c);
};

// A control-plane message: a serialized control::ControlRequest or ControlReply.
struct ControlMsg {
  static constexpr MessageKind kKind = MessageKind::kControl;
  static constexpr uint16_t kLayoutVersion = 1;
  MessageHeader header;
  ArrayRef payload;  // uint8: Protobuf bytes
};

// Array element sizes, in the order of each message's ArrayRefs.
constexpr size_t TokenizedRequestMsg::Bytes(const Counts& c) {
  return MessageSize<TokenizedRequestMsg>(
      {c.input_ids * sizeof(int32_t), c.stop_token_ids * sizeof(int32_t), c.stop_str_bytes, c.stop_strs * sizeof(uint32_t),
       c.cache_salt_bytes, c.routing_key_bytes, c.grammar_bytes});
}
constexpr size_t ForwardBatchMsg::Bytes(const Counts& c) {
  return MessageSize<ForwardBatchMsg>({c.reqs * sizeof(ForwardReqWire), c.tokens * sizeof(int32_t),
                                       c.tokens * sizeof(int32_t), c.prefix_slots * sizeof(int32_t),
                                       c.released_rids * sizeof(uint64_t), c.history_ids * sizeof(int32_t),
                                       c.grammar_bytes});
}
constexpr size_t ForwardResultMsg::Bytes(const Counts& c) {
  return MessageSize<ForwardResultMsg>({c.reqs * sizeof(int32_t), c.logprobs * sizeof(float), c.top * sizeof(int32_t),
                                        c.top * sizeof(float), c.error_bytes});
}
constexpr size_t BatchTokenIdOutMsg::Bytes(const Counts& c) {
  return MessageSize<BatchTokenIdOutMsg>({c.entries * sizeof(OutputEntry), c.ids * sizeof(int32_t),
                                          c.out_ids * sizeof(int32_t), c.logprobs * sizeof(float), c.text_bytes,
                                          c.top * sizeof(int32_t), c.top * sizeof(float)});
}
constexpr size_t BatchStrOutMsg::Bytes(const Counts& c) {
  return MessageSize<BatchStrOutMsg>({c.entries * sizeof(OutputEntry), c.ids * sizeof(int32_t), 0,
                                      c.logprobs * sizeof(float), c.text_bytes, c.top * sizeof(int32_t),
                                      c.top * sizeof(float)});
}

constexpr size_t ActivationsMsg::Bytes(const Counts& c) {
  return MessageSize<ActivationsMsg>({c.floats * sizeof(float), c.error_bytes});
}

constexpr size_t CacheEventsMsg::Bytes(const Counts& c) {
  return MessageSize<CacheEventsMsg>({c.events * sizeof(CacheEventWire), c.tokens * sizeof(int32_t), c.ns_bytes});
}

// The kind of a received chunk, or kInvalid when it has no readable header.
MessageKind PeekKind(const void* bytes, size_t size) noexcept;

Result<const TokenizedRequestMsg*> ValidateTokenizedRequest(const void* bytes, size_t size) noexcept;
Result<const AbortRequestMsg*> ValidateAbortRequest(const void* bytes, size_t size) noexcept;
Result<const ForwardBatchMsg*> ValidateForwardBatch(const void* bytes, size_t size) noexcept;
Result<const ForwardResultMsg*> ValidateForwardResult(const void* bytes, size_t size) noexcept;
Result<const BatchTokenIdOutMsg*> ValidateBatchTokenIdOut(const void* bytes, size_t size) noexcept;
Result<const BatchStrOutMsg*> ValidateBatchStrOut(const void* bytes, size_t size) noexcept;
Result<const NodeStatusMsg*> ValidateNodeStatus(const void* bytes, size_t size) noexcept;
Result<const ControlMsg*> ValidateControl(const void* bytes, size_t size) noexcept;
Result<const CacheEventsMsg*> ValidateCacheEvents(const void* bytes, size_t size) noexcept;
Result<const ActivationsMsg*> ValidateActivations(const void* bytes, size_t size) noexcept;

}  // namespace radixserve::transport
