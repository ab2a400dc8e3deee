# libsegyio (Debian libsegyio-dev), the SEG-Y tests' second reader and writer of raw files: optional,
# used when found (the library reads and writes SEG-Y itself since issue 34). Sets FDSTENCIL_HAVE_SEGYIO (ON or OFF) and, when ON, the build-only target fdstencil_segyio that
# carries the header's directory and the library, and FDSTENCIL_SEGYIO_LIBRARY (the file).
#
# Debian's segyio-config.cmake declares an imported target `segyio` but ships no
# segyio-config-<config>.cmake with its library file, so linking that target fails at generate
# time. The package is therefore used only to point at its prefix; the header and the library are
# then found by name, under CMAKE_PREFIX_PATH as anywhere else. The static library comes first:
# the tool then needs no libsegyio1 at run time, which matters where segyio is an unpacked .deb
# under -DCMAKE_PREFIX_PATH=<dir>/usr rather than an installed package.
set(FDSTENCIL_SEGYIO AUTO CACHE STRING "libsegyio for the SEG-Y tests: AUTO, ON or OFF")
set_property(CACHE FDSTENCIL_SEGYIO PROPERTY STRINGS AUTO ON OFF)
set(FDSTENCIL_HAVE_SEGYIO OFF)
if(NOT FDSTENCIL_SEGYIO STREQUAL "OFF")
  set(_segyio_prefixes "")
  find_package(segyio CONFIG QUIET)
  if(TARGET segyio)
    get_target_property(_segyio_includes segyio INTERFACE_INCLUDE_DIRECTORIES)
    foreach(_dir IN LISTS _segyio_includes)
      get_filename_component(_prefix "${_dir}" DIRECTORY)
      list(APPEND _segyio_prefixes "${_prefix}")
    endforeach()
  endif()
  set(_segyio_lib_hints "")
  foreach(_prefix IN LISTS _segyio_prefixes)
    list(APPEND _segyio_lib_hints "${_prefix}/lib/${CMAKE_LIBRARY_ARCHITECTURE}" "${_prefix}/lib")
  endforeach()
  find_path(FDSTENCIL_SEGYIO_INCLUDE_DIR segyio/segy.h HINTS ${_segyio_prefixes} PATH_SUFFIXES include
            DOC "The directory holding segyio/segy.h")
  find_library(FDSTENCIL_SEGYIO_LIBRARY NAMES libsegyio.a segyio HINTS ${_segyio_lib_hints}
               DOC "libsegyio, static preferred")
  if(NOT FDSTENCIL_SEGYIO_INCLUDE_DIR)
    set(_segyio_why "segyio/segy.h not found")
  elseif(NOT FDSTENCIL_SEGYIO_LIBRARY)
    set(_segyio_why "segyio/segy.h found in ${FDSTENCIL_SEGYIO_INCLUDE_DIR} but no libsegyio")
  else()
    # A header and a library of different installs, or a static library built for another
    # machine, fail only at link time: link a probe now. The result is cached per pair of paths,
    # so pointing at another segyio probes again.
    include(CheckCXXSourceCompiles)
    string(MD5 _segyio_key "${FDSTENCIL_SEGYIO_INCLUDE_DIR};${FDSTENCIL_SEGYIO_LIBRARY}")
    set(CMAKE_REQUIRED_INCLUDES "${FDSTENCIL_SEGYIO_INCLUDE_DIR}")
    set(CMAKE_REQUIRED_LIBRARIES "${FDSTENCIL_SEGYIO_LIBRARY};m")  # libm: segyio's IBM float conversion
    set(CMAKE_REQUIRED_QUIET ON)
    check_cxx_source_compiles(
      "#include <segyio/segy.h>
       int main() { char bin[SEGY_BINARY_HEADER_SIZE] = {}; return segy_format(bin) + segy_trsize(5, 1); }"
      FDSTENCIL_SEGYIO_LINKS_${_segyio_key})
    unset(CMAKE_REQUIRED_INCLUDES)
    unset(CMAKE_REQUIRED_LIBRARIES)
    unset(CMAKE_REQUIRED_QUIET)
    if(FDSTENCIL_SEGYIO_LINKS_${_segyio_key})
      set(FDSTENCIL_HAVE_SEGYIO ON)
    else()
      string(CONCAT _segyio_why "a program using ${FDSTENCIL_SEGYIO_INCLUDE_DIR}/segyio/segy.h does not link "
                    "with ${FDSTENCIL_SEGYIO_LIBRARY}")
    endif()
  endif()
  if(NOT FDSTENCIL_HAVE_SEGYIO AND FDSTENCIL_SEGYIO STREQUAL "ON")
    message(FATAL_ERROR "FDSTENCIL_SEGYIO=ON but ${_segyio_why} (install libsegyio-dev, or add the prefix "
                        "holding include/segyio/segy.h to CMAKE_PREFIX_PATH)")
  endif()
endif()

if(FDSTENCIL_HAVE_SEGYIO)
  add_library(fdstencil_segyio INTERFACE)
  target_include_directories(fdstencil_segyio INTERFACE "${FDSTENCIL_SEGYIO_INCLUDE_DIR}")
  target_link_libraries(fdstencil_segyio INTERFACE "${FDSTENCIL_SEGYIO_LIBRARY}" m)
  message(STATUS "fdstencil: libsegyio for the SEG-Y tests ON (${FDSTENCIL_SEGYIO_LIBRARY})")
elseif(FDSTENCIL_SEGYIO STREQUAL "OFF")
  message(STATUS "fdstencil: libsegyio for the SEG-Y tests OFF (FDSTENCIL_SEGYIO=OFF)")
else()
  message(STATUS "fdstencil: libsegyio for the SEG-Y tests OFF (${_segyio_why}; install libsegyio-dev or "
                 "add its prefix to CMAKE_PREFIX_PATH for the tests that check files with it)")
endif()
