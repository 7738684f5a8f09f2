# The project's own kernel packs, ${CDNN_OUT_LIB}/cdnn/kernels/<family>.kpack,
# where the kernels provider looks by default (<libdir>/cdnn/kernels, next to
# <libdir>/cdnn/providers), so that a plain build has kernels:* engines.
# Each is made by the CLI just built, `cdnn pack build`, from the descriptors
# in descriptors/<family>/ (one engine each) and the code objects they name,
# exactly as anyone else would make a pack; included from kernels/CMakeLists.txt
# after the families' directories.
set(CDNN_OUT_KERNELS ${CDNN_OUT_LIB}/cdnn/kernels)
set(CDNN_INSTALL_KERNELS ${CMAKE_INSTALL_LIBDIR}/cdnn/kernels)

# Sanitizer and fuzz builds instrument the host objects, which then need the
# sanitizer's runtime: such objects must not end up in a pack (nor, through
# it, in saved plans).  Their tests make packs of their own.
if(CDNN_SANITIZE OR CDNN_SANITIZE_THREAD OR CDNN_FUZZ)
  message(STATUS "kernel packs: not made in sanitizer and fuzz builds")
  return()
endif()

# kernel_pack(FAMILY OBJECT_DIR OBJECT_TARGET): FAMILY.kpack from
# descriptors/FAMILY/*.json and the objects they name in OBJECT_DIR (built by
# OBJECT_TARGET); remade when a descriptor, an object or the CLI changes.
function(kernel_pack family object_dir object_target)
  file(GLOB descriptors CONFIGURE_DEPENDS
       ${CMAKE_CURRENT_LIST_DIR}/descriptors/${family}/*.json)
  # The objects, as file dependencies: read from the descriptors, so that
  # they are the one list of what goes into the pack.
  set(objects)
  foreach(descriptor ${descriptors})
    file(READ ${descriptor} json)
    string(JSON count LENGTH "${json}" candidates)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      string(JSON object GET "${json}" candidates ${i} object)
      list(APPEND objects ${object_dir}/${object})
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES objects)

  set(pack ${CDNN_OUT_KERNELS}/${family}.kpack)
  add_custom_command(OUTPUT ${pack}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CDNN_OUT_KERNELS}
    COMMAND cdnn_cli pack build ${descriptors} --objects ${object_dir} -o ${pack}
    DEPENDS ${descriptors} ${objects} cdnn_cli
    COMMENT "cdnn pack build ${family}.kpack" VERBATIM)
  add_custom_target(${family}_kernel_pack ALL DEPENDS ${pack})
  add_dependencies(${family}_kernel_pack ${object_target})
  install(FILES ${pack} DESTINATION ${CDNN_INSTALL_KERNELS})
endfunction()

# host: the descriptors name every level, so a compiler that cannot target
# one of them (kernels/host skips that level) gets no host pack.
get_property(host_levels GLOBAL PROPERTY CDNN_HOST_KERNEL_LEVELS)
if("x86-64-v2;x86-64-v3;x86-64-v4" STREQUAL "${host_levels}")
  kernel_pack(host ${CMAKE_BINARY_DIR}/kernels/host host_kernels)
else()
  message(STATUS "kernel packs: host.kpack not made: the host kernels are built "
                 "for '${host_levels}' only, and its descriptors name x86-64-v2..v4")
endif()

# cuda: only where nvcc built the code objects (kernels/cuda says when).
get_property(cuda_dir GLOBAL PROPERTY CDNN_CUDA_KERNEL_DIR)
if(cuda_dir)
  kernel_pack(cuda ${cuda_dir} cuda_kernels)
else()
  message(STATUS "kernel packs: cuda.kpack not made: no CUDA code objects")
endif()
