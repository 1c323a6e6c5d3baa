# cuDNN 9 discovery for the attention suite's vendor peer (kernels/attention/cudnn_sdpa.cpp).
#
# Looks for cudnn.h and libcudnn in, by priority:
#   1. FUSEBENCH_CUDNN_ROOT (cache path): ROOT/include, ROOT/lib, ROOT/lib64. For the pip wheel:
#        -DFUSEBENCH_CUDNN_ROOT=$(python3 -c "import nvidia.cudnn as m; print(m.__path__[0])")
#   2. the CUDA toolkit's include and library dirs (found by find_package(CUDAToolkit) first);
#   3. CMake's default system paths (e.g. a Debian cudnn9 package under /usr/include, /usr/lib/<arch>).
# Results: FUSEBENCH_HAVE_CUDNN (ON/OFF), the imported target fusebench::cudnn (when ON),
# FUSEBENCH_CUDNN_VERSION (from cudnn_version.h), FUSEBENCH_CUDNN_LIBRARY_DIR, which is appended to
# CMAKE_BUILD_RPATH so binaries find libcudnn without LD_LIBRARY_PATH. Needs cuDNN major 9.

set(FUSEBENCH_CUDNN_ROOT "" CACHE PATH
    "cuDNN 9 root to search first (ROOT/include/cudnn.h, ROOT/lib or ROOT/lib64/libcudnn.so*); empty: CUDA toolkit and system paths")

# A changed root invalidates what an earlier configure found.
if(NOT "${FUSEBENCH_CUDNN_ROOT}" STREQUAL "${_FUSEBENCH_CUDNN_ROOT_USED}")
  unset(FUSEBENCH_CUDNN_INCLUDE_DIR CACHE)
  unset(FUSEBENCH_CUDNN_LIBRARY CACHE)
endif()
set(_FUSEBENCH_CUDNN_ROOT_USED "${FUSEBENCH_CUDNN_ROOT}" CACHE INTERNAL "")

set(_fusebench_cudnn_inc_hints "")
set(_fusebench_cudnn_lib_hints "")
if(FUSEBENCH_CUDNN_ROOT)
  list(APPEND _fusebench_cudnn_inc_hints "${FUSEBENCH_CUDNN_ROOT}/include")
  list(APPEND _fusebench_cudnn_lib_hints "${FUSEBENCH_CUDNN_ROOT}/lib" "${FUSEBENCH_CUDNN_ROOT}/lib64")
  # The root wins over everything else when it holds cuDNN.
  find_path(FUSEBENCH_CUDNN_INCLUDE_DIR cudnn.h PATHS ${_fusebench_cudnn_inc_hints} NO_DEFAULT_PATH)
  # pip wheels ship libcudnn.so.9 without the unversioned link.
  find_library(FUSEBENCH_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 PATHS ${_fusebench_cudnn_lib_hints} NO_DEFAULT_PATH)
endif()
find_path(FUSEBENCH_CUDNN_INCLUDE_DIR cudnn.h
          HINTS ${_fusebench_cudnn_inc_hints} ${CUDAToolkit_INCLUDE_DIRS}
          DOC "directory holding cudnn.h")
find_library(FUSEBENCH_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9
             HINTS ${_fusebench_cudnn_lib_hints} ${CUDAToolkit_LIBRARY_DIR} "${CUDAToolkit_LIBRARY_ROOT}/lib64"
                   "${CUDAToolkit_LIBRARY_ROOT}/lib"
             DOC "libcudnn (cuDNN 9)")
mark_as_advanced(FUSEBENCH_CUDNN_INCLUDE_DIR FUSEBENCH_CUDNN_LIBRARY)

set(FUSEBENCH_HAVE_CUDNN OFF)
set(FUSEBENCH_CUDNN_VERSION "")
set(_fusebench_cudnn_why "")
if(NOT FUSEBENCH_CUDNN_INCLUDE_DIR)
  set(_fusebench_cudnn_why "cudnn.h not found")
elseif(NOT FUSEBENCH_CUDNN_LIBRARY)
  set(_fusebench_cudnn_why "cudnn.h in ${FUSEBENCH_CUDNN_INCLUDE_DIR} but no libcudnn found")
else()
  set(_fusebench_cudnn_vfile "${FUSEBENCH_CUDNN_INCLUDE_DIR}/cudnn_version.h")
  if(NOT EXISTS "${_fusebench_cudnn_vfile}")
    set(_fusebench_cudnn_vfile "${FUSEBENCH_CUDNN_INCLUDE_DIR}/cudnn.h")  # cuDNN < 8 kept it there
  endif()
  file(STRINGS "${_fusebench_cudnn_vfile}" _fusebench_cudnn_vlines REGEX "^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +[0-9]+")
  foreach(_part MAJOR MINOR PATCHLEVEL)
    set(_fusebench_cudnn_${_part} "")
    foreach(_line IN LISTS _fusebench_cudnn_vlines)
      if(_line MATCHES "^#define CUDNN_${_part} +([0-9]+)")
        set(_fusebench_cudnn_${_part} "${CMAKE_MATCH_1}")
      endif()
    endforeach()
  endforeach()
  set(FUSEBENCH_CUDNN_VERSION "${_fusebench_cudnn_MAJOR}.${_fusebench_cudnn_MINOR}.${_fusebench_cudnn_PATCHLEVEL}")
  if(NOT _fusebench_cudnn_MAJOR STREQUAL "9")
    set(_fusebench_cudnn_why "found cuDNN '${FUSEBENCH_CUDNN_VERSION}' in ${FUSEBENCH_CUDNN_INCLUDE_DIR}, need major 9")
  else()
    set(FUSEBENCH_HAVE_CUDNN ON)
  endif()
endif()

if(FUSEBENCH_HAVE_CUDNN)
  get_filename_component(FUSEBENCH_CUDNN_LIBRARY_DIR "${FUSEBENCH_CUDNN_LIBRARY}" DIRECTORY)
  if(NOT TARGET fusebench::cudnn)
    add_library(fusebench::cudnn SHARED IMPORTED)
    set_target_properties(fusebench::cudnn PROPERTIES
      IMPORTED_LOCATION "${FUSEBENCH_CUDNN_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${FUSEBENCH_CUDNN_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES CUDA::cudart)
  endif()
  # libcudnn loads its sub-libraries (graph, engines, heuristics) from its own directory.
  list(APPEND CMAKE_BUILD_RPATH "${FUSEBENCH_CUDNN_LIBRARY_DIR}")
  message(STATUS "cuDNN ${FUSEBENCH_CUDNN_VERSION}: ${FUSEBENCH_CUDNN_LIBRARY} (headers ${FUSEBENCH_CUDNN_INCLUDE_DIR}); "
                 "the cuDNN SDPA peer is built")
else()
  message(STATUS "cuDNN 9 not found (${_fusebench_cudnn_why}): the cuDNN SDPA peer reports itself unavailable; "
                 "point -DFUSEBENCH_CUDNN_ROOT=<dir with include/ and lib/> at an install to build it")
endif()
