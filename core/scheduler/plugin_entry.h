// Helpers for writing a plugin's C entry point around a C++ factory
// (Result<std::unique_ptr<Base>>(const Params&)). Header-only; used by plugins.
#pragma once

#include <cstdio>
#include <memory>

#include "core/scheduler/params.h"
#include "core/scheduler/plugin_abi.h"

namespace radixserve::sched {

template <typename Base, auto Factory>
void* PluginCreate(const void* params, char* err, size_t err_len) {
  auto made = Factory(*static_cast<const Params*>(params));
  if (!made.ok()) {
    std::snprintf(err, err_len, "%s", made.status().message().c_str());
    return nullptr;
  }
  Base* object = made.value().release();
  return object;
}

template <typename Base>
void PluginDestroy(void* object) {
  delete static_cast<Base*>(object);
}

}  // namespace radixserve::sched

// Defines the exported entry point of a plugin library.
#define RADIXSERVE_DEFINE_PLUGIN(KIND, BASE, NAME, DESCRIPTION, PARAMS, NUM_PARAMS, FACTORY)              \
  namespace {                                                                                           \
  const RsPluginDescriptor kRsDescriptor = {RADIXSERVE_PLUGIN_ABI_VERSION, KIND,                        \
                                            RADIXSERVE_PLUGIN_INTERFACE_HASH_OF(KIND), NAME, DESCRIPTION,        \
                                            PARAMS, NUM_PARAMS,                                         \
                                            &::radixserve::sched::PluginCreate<BASE, FACTORY>,          \
                                            &::radixserve::sched::PluginDestroy<BASE>};                 \
  }                                                                                                     \
  RADIXSERVE_PLUGIN_EXPORT const RsPluginDescriptor* radixserve_plugin_descriptor(void) { return &kRsDescriptor; }
