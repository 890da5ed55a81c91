// A policy plugin of this ABI version built against other scheduler headers (its interface hash
// differs): the host must refuse it before calling anything in it.
#include "core/scheduler/plugin_abi.h"

namespace {
void* Create(const void*, char*, size_t) { return nullptr; }
void Destroy(void*) {}
const RsPluginDescriptor kDesc = {RADIXSERVE_PLUGIN_ABI_VERSION, RS_PLUGIN_POLICY, RADIXSERVE_PLUGIN_INTERFACE_HASH_POLICY ^ 1u,
                                  "otherheaders", "test", nullptr, 0, &Create, &Destroy};
}  // namespace

RADIXSERVE_PLUGIN_EXPORT const RsPluginDescriptor* radixserve_plugin_descriptor(void) { return &kDesc; }
