# The radixserve plugin SDK, found with find_package(radixserve) in an installed prefix
# (cmake --install <build> --component sdk --prefix <prefix>).
#
#   radixserve::plugin_sdk     the plugin interface headers (include/radixserve) and the library
#                              they declare; C++20.
#   radixserve_add_plugin(<name> KIND policy|cache|routing SOURCES <file>...)
#                              builds the loadable libradixserve_<kind>_<name>.so (dashes in <name>
#                              become underscores; the descriptor's name keeps them), exporting only
#                              the plugin's C entry point. Copy it into a plugin directory of the
#                              scheduler (plugin_dirs) and swap it in while serving.
# A plugin built here carries this SDK's interface hashes: the engine refuses it when its own
# headers differ (rebuild the plugin against the engine's SDK).

get_filename_component(_radixserve_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET radixserve::plugin_sdk)
  add_library(radixserve::plugin_sdk INTERFACE IMPORTED)
  set_target_properties(radixserve::plugin_sdk PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_radixserve_prefix}/include/radixserve"
    INTERFACE_COMPILE_FEATURES cxx_std_20
    INTERFACE_LINK_LIBRARIES "${_radixserve_prefix}/lib/libradixserve_scheduler.so;${_radixserve_prefix}/lib/libradixserve_util.so")
endif()

function(radixserve_add_plugin name)
  cmake_parse_arguments(ARG "" "KIND" "SOURCES" ${ARGN})
  if(NOT ARG_KIND MATCHES "^(policy|cache|routing)$")
    message(FATAL_ERROR "radixserve_add_plugin(${name}): KIND must be policy, cache or routing, not '${ARG_KIND}'")
  endif()
  string(REPLACE "-" "_" file_name "${name}")
  set(target radixserve_${ARG_KIND}_${file_name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE radixserve::plugin_sdk)
  set_target_properties(${target} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
                                             OUTPUT_NAME radixserve_${ARG_KIND}_${file_name} PREFIX "lib")
endfunction()
