#include "transport/channel.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "iceoryx_posh/popo/untyped_publisher.hpp"
#include "iceoryx_posh/popo/untyped_subscriber.hpp"
#include "iceoryx_posh/popo/user_trigger.hpp"
#include "iceoryx_posh/popo/wait_set.hpp"
#include "iceoryx_hoofs/log/logmanager.hpp"
#include "iceoryx_posh/runtime/posh_runtime.hpp"
#include "transport/roudi_process.h"

namespace radixserve::transport {
namespace {

std::atomic<bool> g_runtime_ready{false};

iox::capro::ServiceDescription Describe(const Topic& t) {
  using iox::capro::IdString_t;
  return {IdString_t(iox::cxx::TruncateToCapacity, kServiceName),
          IdString_t(iox::cxx::TruncateToCapacity, t.ns.c_str()),
          IdString_t(iox::cxx::TruncateToCapacity, t.name.c_str())};
}

}  // namespace

Status InitRuntime(const std::string& name, std::chrono::milliseconds timeout) {
  if (g_runtime_ready.load()) return Status::FailedPrecondition("iceoryx runtime already initialised in this process");
  if (name.empty() || name.size() > 100 || name.find('/') != std::string::npos)
    return Status::InvalidArgument("runtime name '" + name + "' must be 1..100 characters without '/'");
  // iceoryx terminates the process when RouDi never answers; ask first and fail as a value instead.
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!RouDiRunning()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return Status::Unavailable("no iceoryx RouDi is running (start one with `iox-roudi`, or use `radixserve launch`)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // iceoryx's client logs registration details at debug level; keep warnings and errors only.
  iox::log::LogManager::GetLogManager().SetDefaultLogLevel(iox::log::LogLevel::kWarn);
  iox::runtime::PoshRuntime::initRuntime(iox::RuntimeName_t(iox::cxx::TruncateToCapacity, name.c_str()));
  g_runtime_ready.store(true);
  return Status::Ok();
}

bool RuntimeInitialized() { return g_runtime_ready.load(); }

// ---- Publisher -----------------------------------------------------------------

struct Publisher::Impl {
  Impl(const iox::capro::ServiceDescription& d, const iox::popo::PublisherOptions& o) : pub(d, o) {}
  iox::popo::UntypedPublisher pub;
};

Publisher::Publisher(Topic t, ChannelOptions o, std::unique_ptr<Impl> impl)
    : topic_(std::move(t)), options_(o), impl_(std::move(impl)) {}
Publisher::~Publisher() = default;

Result<std::unique_ptr<Publisher>> Publisher::Create(const Topic& topic, const ChannelOptions& options) {
  if (!RuntimeInitialized()) return Status::FailedPrecondition("InitRuntime must be called before opening " + topic.ToString());
  RS_RETURN_IF_ERROR(ValidateTopic(topic));
  iox::popo::PublisherOptions o;
  o.subscriberTooSlowPolicy = options.block_when_full ? iox::popo::ConsumerTooSlowPolicy::WAIT_FOR_CONSUMER
                                                      : iox::popo::ConsumerTooSlowPolicy::DISCARD_OLDEST_DATA;
  auto impl = std::make_unique<Impl>(Describe(topic), o);
  return std::unique_ptr<Publisher>(new Publisher(topic, options, std::move(impl)));
}

Result<void*> Publisher::Loan(size_t size) {
  if (size == 0) return Status::InvalidArgument("cannot loan an empty chunk on " + topic_.ToString());
  if (size > options_.max_payload)
    return Status::OutOfRange("message of " + std::to_string(size) + " bytes on " + topic_.ToString() +
                              " exceeds the largest shared-memory chunk (" + std::to_string(options_.max_payload) +
                              " bytes)");
  auto r = impl_->pub.loan(static_cast<uint32_t>(size), 8);
  if (r.has_error()) {
    auto e = r.get_error();
    return Status::ResourceExhausted("cannot loan " + std::to_string(size) + " bytes on " + topic_.ToString() + ": " +
                                     iox::popo::asStringLiteral(e));
  }
  return r.value();
}

void Publisher::Publish(void* chunk) { impl_->pub.publish(chunk); }
void Publisher::Release(void* chunk) { impl_->pub.release(chunk); }

Status Publisher::PublishCopy(std::span<const uint8_t> bytes) {
  RS_ASSIGN_OR_RETURN(void* chunk, Loan(bytes.size()));
  std::memcpy(chunk, bytes.data(), bytes.size());
  Publish(chunk);
  return Status::Ok();
}

bool Publisher::HasSubscribers() const { return impl_->pub.hasSubscribers(); }

// ---- Subscriber ----------------------------------------------------------------

struct Subscriber::Impl {
  Impl(const iox::capro::ServiceDescription& d, const iox::popo::SubscriberOptions& o) : sub(d, o) {}
  iox::popo::UntypedSubscriber sub;
};

Subscriber::Subscriber(Topic t, std::unique_ptr<Impl> impl) : topic_(std::move(t)), impl_(std::move(impl)) {}
Subscriber::~Subscriber() = default;

Result<std::unique_ptr<Subscriber>> Subscriber::Create(const Topic& topic, const ChannelOptions& options) {
  if (!RuntimeInitialized()) return Status::FailedPrecondition("InitRuntime must be called before opening " + topic.ToString());
  RS_RETURN_IF_ERROR(ValidateTopic(topic));
  iox::popo::SubscriberOptions o;
  o.queueCapacity = std::min<uint64_t>(options.queue_capacity, iox::popo::SubscriberChunkQueueData_t::MAX_CAPACITY);
  o.queueFullPolicy = options.block_when_full ? iox::popo::QueueFullPolicy::BLOCK_PRODUCER
                                              : iox::popo::QueueFullPolicy::DISCARD_OLDEST_DATA;
  auto impl = std::make_unique<Impl>(Describe(topic), o);
  return std::unique_ptr<Subscriber>(new Subscriber(topic, std::move(impl)));
}

Received Subscriber::TryTake() {
  auto r = impl_->sub.take();
  if (r.has_error()) return Received();
  const void* payload = r.value();
  const auto* header = iox::mepoo::ChunkHeader::fromUserPayload(payload);
  return Received(this, payload, header->userPayloadSize());
}

bool Subscriber::HasData() const { return impl_->sub.hasData(); }
void Subscriber::ReleaseChunk(const void* data) { impl_->sub.release(data); }

Received& Received::operator=(Received&& o) noexcept {
  if (this != &o) {
    if (owner_ && data_) owner_->ReleaseChunk(data_);
    owner_ = o.owner_;
    data_ = o.data_;
    size_ = o.size_;
    o.owner_ = nullptr;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

Received::~Received() {
  if (owner_ && data_) owner_->ReleaseChunk(data_);
}

// ---- Waiter --------------------------------------------------------------------

struct Waiter::Impl {
  iox::popo::WaitSet<> waitset;
  iox::popo::UserTrigger trigger;
};

Waiter::Waiter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Waiter::~Waiter() = default;

Result<std::unique_ptr<Waiter>> Waiter::Create() {
  if (!RuntimeInitialized()) return Status::FailedPrecondition("InitRuntime must be called before creating a Waiter");
  auto impl = std::make_unique<Impl>();
  if (impl->waitset.attachEvent(impl->trigger).has_error())
    return Status::ResourceExhausted("cannot attach the wake-up trigger to a WaitSet");
  return std::unique_ptr<Waiter>(new Waiter(std::move(impl)));
}

Status Waiter::Attach(Subscriber& s) {
  if (impl_->waitset.attachState(s.impl_->sub, iox::popo::SubscriberState::HAS_DATA).has_error())
    return Status::ResourceExhausted("cannot attach " + s.topic().ToString() + " to the WaitSet");
  return Status::Ok();
}

bool Waiter::Wait(std::chrono::microseconds timeout) {
  auto notes = impl_->waitset.timedWait(iox::units::Duration::fromMicroseconds(static_cast<uint64_t>(timeout.count())));
  return !notes.empty();
}

void Waiter::Wake() { impl_->trigger.trigger(); }

}  // namespace radixserve::transport
