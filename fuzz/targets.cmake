# The fuzz targets and the libraries each one exercises; shared by fuzz/ (libFuzzer builds)
# and tests/fuzz/ (the regression replay tests built with the normal compiler).
set(RADIXSERVE_FUZZ_TARGETS gguf tokenizer request_parser http_connection launch messages)
# Targets with inputs that once crashed them in fuzz/regressions/<target>/ (the replay test requires
# the folder of each listed target to hold inputs, and no folder for the others).
set(RADIXSERVE_FUZZ_REGRESSION_TARGETS gguf)
set(RADIXSERVE_FUZZ_DEPS_gguf radixserve_gguf)
set(RADIXSERVE_FUZZ_DEPS_tokenizer radixserve_tokenizer radixserve_modelgen radixserve_gguf)
set(RADIXSERVE_FUZZ_DEPS_request_parser radixserve_api)
set(RADIXSERVE_FUZZ_DEPS_http_connection radixserve_api)
set(RADIXSERVE_FUZZ_DEPS_launch radixserve_launch)
set(RADIXSERVE_FUZZ_DEPS_messages radixserve_transport)
