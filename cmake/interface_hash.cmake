# The interface hash of a plugin kind: SHA-256 over the include closure of the headers whose types
# cross that kind's plugin boundary (each project header they include, transitively), with
# comments and layout removed, so that editing a comment or reflowing a line refuses no plugin and
# changing a declaration refuses every plugin of that kind built before it.
#
# radixserve_interface_closure(<out> <root> <header>...): the closure, as paths relative to <root>,
#   sorted; a quoted include that is not under <root> is an error (the closure must be complete).
# radixserve_interface_hash(<out> <root> <header>...): its 16-hex-digit hash.
# As a script: cmake -DROOT=<dir> -DHEADERS=<a;b> -P interface_hash.cmake prints the hash.

cmake_policy(PUSH)
cmake_policy(VERSION 3.20)  # also in script mode: if(IN_LIST), while(TRUE)
function(radixserve_interface_closure out root)
  set(todo ${ARGN})
  set(seen "")
  while(todo)
    list(POP_FRONT todo h)
    if(h IN_LIST seen)
      continue()
    endif()
    if(NOT EXISTS "${root}/${h}")
      message(FATAL_ERROR "plugin interface: ${h} is not under ${root}")
    endif()
    list(APPEND seen ${h})
    file(STRINGS "${root}/${h}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line ${includes})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" inc "${line}")
      # The generated hash header is the output, not an input.
      if(NOT inc STREQUAL "radixserve/plugin_interface_hash.h")
        list(APPEND todo ${inc})
      endif()
    endforeach()
  endwhile()
  list(SORT seen)
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# The text of a header without comments, each run of white space one blank.
function(_radixserve_interface_text out file)
  file(READ "${file}" text)
  set(kept "")
  while(TRUE)
    string(FIND "${text}" "/*" open)
    if(open EQUAL -1)
      break()
    endif()
    string(SUBSTRING "${text}" 0 ${open} head)
    string(APPEND kept "${head} ")
    math(EXPR after "${open} + 2")
    string(SUBSTRING "${text}" ${after} -1 text)
    string(FIND "${text}" "*/" close)
    if(close EQUAL -1)
      set(text "")
      break()
    endif()
    math(EXPR after "${close} + 2")
    string(SUBSTRING "${text}" ${after} -1 text)
  endwhile()
  string(APPEND kept "${text}")
  # A line comment starts a line or follows white space ("http://" in a string is not one).
  string(REGEX REPLACE "(^|[ \t\n])//[^\n]*" "\\1" kept "${kept}")
  string(REGEX REPLACE "[ \t\r\n]+" " " kept "${kept}")
  string(STRIP "${kept}" kept)
  set(${out} "${kept}" PARENT_SCOPE)
endfunction()

function(radixserve_interface_hash out root)
  radixserve_interface_closure(files "${root}" ${ARGN})
  set(all "")
  foreach(h ${files})
    _radixserve_interface_text(t "${root}/${h}")
    string(APPEND all "== ${h}\n${t}\n")
  endforeach()
  string(SHA256 sha "${all}")
  string(SUBSTRING "${sha}" 0 16 sha)
  set(${out} ${sha} PARENT_SCOPE)
endfunction()

cmake_policy(POP)

if(CMAKE_SCRIPT_MODE_FILE AND DEFINED ROOT AND DEFINED HEADERS)
  radixserve_interface_hash(h "${ROOT}" ${HEADERS})
  message("${h}")
endif()
