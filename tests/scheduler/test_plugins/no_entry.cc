// A shared library without the plugin entry point.
extern "C" __attribute__((visibility("default"))) int radixserve_not_a_plugin(void) { return 1; }
