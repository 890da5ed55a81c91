# Install rules. `cmake --install build --prefix P` puts the engine under P: bin/radixserve, and in
# lib/ every library, node component, plugin and preload it loads (they find each other through
# $ORIGIN, and the plugin and component loaders look next to them), and the launch files in
# share/radixserve/launch. The component `sdk` alone
# (--component sdk) is what an out-of-tree plugin builds against: the headers of every plugin
# interface closure under include/radixserve, the libraries they declare, and
# lib/cmake/radixserve (find_package(radixserve); examples/policy_plugin shows its use).

# Every shared library and module of the product (tests, benchmarks and fuzzers are not installed).
function(_radixserve_product_targets out)
  set(found "")
  set(dirs ${ARGN})
  while(dirs)
    list(POP_FRONT dirs d)
    get_property(subdirs DIRECTORY ${d} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY ${d} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t ${targets})
      get_target_property(type ${t} TYPE)
      if(type STREQUAL "SHARED_LIBRARY" OR type STREQUAL "MODULE_LIBRARY" OR type STREQUAL "EXECUTABLE")
        list(APPEND found ${t})
      endif()
    endforeach()
  endwhile()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

_radixserve_product_targets(product_targets core kernels transport nodes launch plugins tools)
install(TARGETS ${product_targets}
        RUNTIME DESTINATION bin COMPONENT runtime
        LIBRARY DESTINATION lib COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/launch/ DESTINATION share/radixserve/launch COMPONENT runtime
        FILES_MATCHING PATTERN "*.yaml")

# The SDK: the plugin interface headers, where they are in the tree, and the hashes they make.
foreach(h ${RADIXSERVE_PLUGIN_INTERFACE_HEADERS})
  get_filename_component(dir ${h} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${h} DESTINATION include/radixserve/${dir} COMPONENT sdk)
endforeach()
install(FILES ${CMAKE_BINARY_DIR}/generated/radixserve/plugin_interface_hash.h
        DESTINATION include/radixserve/radixserve COMPONENT sdk)
# What the interface headers declare and plugins call (Params, Status, ...).
install(TARGETS radixserve_scheduler radixserve_util LIBRARY DESTINATION lib COMPONENT sdk)
include(CMakePackageConfigHelpers)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/radixserveConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY ExactVersion)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/radixserveConfig.cmake ${CMAKE_BINARY_DIR}/radixserveConfigVersion.cmake
        DESTINATION lib/cmake/radixserve COMPONENT sdk)
