# What the sanitizer tree (scripts/build-sanitize.sh: ASan + UBSan) runs: every unit test, and the
# end-to-end tests that drive node, transport and launcher code in ways no unit test does. The
# end-to-end tests below run in the Release tree only: the code they add over the ones kept runs
# under the sanitizers elsewhere, so a second, several times slower run would find nothing new.
# radixserve_test() neither builds nor registers them there (cmake/radixserve.cmake).
set(RADIXSERVE_E2E_RELEASE_ONLY
  # Its point is duration and resident-memory bounds; its node paths are pipeline_concurrency_test's,
  # and ASan's quarantine makes resident memory meaningless.
  pipeline_soak_test
  # Model code per architecture, which model_reference2_test checks under the sanitizers in-process.
  pipeline_architectures_test
  launch_e2e_models_test
  # The KV budget's arithmetic (kv_budget_test, roudi_sizing_test run it in-process) and refusals.
  launch_e2e_memory_budget_test
  # One start-up error where no GPU is; the same refusal path as launch_e2e_startup_failure_test.
  launch_e2e_device_test
  # JavaScript clients: what they check is the wire format, which the api unit tests (fake backend)
  # and pipeline_golden/concurrency/abort_test exercise under the sanitizers.
  pipeline_openai_client_test
  pipeline_openai_structured_output_test
  pipeline_ai_sdk_generate_object_test
  pipeline_tool_calls_clients_test
  # The benchmark client (bench_server_test runs it in-process against the HTTP server).
  bench_pipeline_test
)
