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

# radixserve_test(NAME SOURCES ... [DEPS ...] [LABELS ...]): a GoogleTest program registered with ctest.
function(radixserve_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE RADIXSERVE_SHARED_DIR="${RADIXSERVE_SHARED_DIR}"
                                             RADIXSERVE_BINARY_DIR="${CMAKE_BINARY_DIR}")
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
