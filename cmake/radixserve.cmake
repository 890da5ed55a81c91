# Helpers shared by every directory.

# Installed binaries find the engine's libraries, and libraries each other, in lib/ (cmake/install.cmake).
set(CMAKE_INSTALL_RPATH "$ORIGIN/../lib;$ORIGIN")

# radixserve_library(NAME SOURCES ... [DEPS ...]): a shared library of the engine.
function(radixserve_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} SHARED ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# radixserve_test(NAME SOURCES ... [DEPS ...] [LABELS ...] [E2E] [TIMEOUT s] [COST s]): a GoogleTest program
# registered with ctest. Every test carries one of two labels: `e2e` (it starts processes: RouDi, the
# launcher, the nodes; E2E) or `unit` (one process), so `ctest -L unit` runs the fast half alone.
# Test code is compiled at -O1: what it drives is built optimised in the libraries, and -O3 on
# assertion-heavy test bodies costs compile time for nothing.
# COST (its Release run time in seconds, roughly) makes ctest start the long tests first, so that a
# fresh tree, with no timings recorded yet, does not end on one of them alone.
# An E2E test named in RADIXSERVE_E2E_RELEASE_ONLY (tests/sanitizer_scope.cmake) is neither built
# nor registered in a sanitizer tree: callers that set its test properties check `if(TEST name)`.
function(radixserve_test name)
  cmake_parse_arguments(ARG "E2E" "TIMEOUT;COST" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE RADIXSERVE_SHARED_DIR="${RADIXSERVE_SHARED_DIR}"
                                             RADIXSERVE_BINARY_DIR="${CMAKE_BINARY_DIR}")
  target_compile_options(${name} PRIVATE -O1)
  if(ARG_E2E)
    list(APPEND ARG_LABELS e2e)
    if(RADIXSERVE_ASAN AND name IN_LIST RADIXSERVE_E2E_RELEASE_ONLY)
      set_target_properties(${name} PROPERTIES EXCLUDE_FROM_ALL TRUE)
      return()
    endif()
  else()
    list(APPEND ARG_LABELS unit)
  endif()
  add_test(NAME ${name} COMMAND ${name})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  if(RADIXSERVE_ASAN)
    math(EXPR ARG_TIMEOUT "${ARG_TIMEOUT} * 3")  # instrumented code runs a few times slower
    # Corpus-wide tests take a sample under the sanitizers (the Release run covers every case).
    target_compile_definitions(${name} PRIVATE RADIXSERVE_SANITIZED=1)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}")
  if(ARG_COST)
    set_tests_properties(${name} PROPERTIES COST ${ARG_COST})
  endif()
endfunction()

# radixserve_benchmark(NAME SOURCES ... [DEPS ...]): a Google Benchmark program (never run by ctest).
function(radixserve_benchmark name)
  if(NOT RADIXSERVE_BUILD_BENCHMARKS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark)
endfunction()
