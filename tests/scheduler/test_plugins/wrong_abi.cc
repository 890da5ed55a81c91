// A policy plugin built for a future ABI version: the host must refuse it.
#include "core/scheduler/plugin_abi.h"

namespace {
void* Create(const void*, char*, size_t) { return nullptr; }
void Destroy(void*) {}
const RsPluginDescriptor kDesc = {99u, RS_PLUGIN_POLICY, 0, "wrongabi", "test", nullptr,
                                  0, &Create, &Destroy};
}  // namespace

RADIXSERVE_PLUGIN_EXPORT const RsPluginDescriptor* radixserve_plugin_descriptor(void) { return &kDesc; }
