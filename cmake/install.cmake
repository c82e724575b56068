# What `cmake --install` puts under the prefix, for any CMAKE_INSTALL_PREFIX
# and CMAKE_INSTALL_LIBDIR (lib, lib64, Debian's lib/x86_64-linux-gnu, or an
# absolute directory): the libraries, headers, command, data, pkg-config
# file, CMake package, man pages and bash completion. Every path written
# into an installed file is relative to where that file lies, so a moved
# prefix (or a DESTDIR staging tree) still works.

# ---- the static library: only the public API global (cmake/localize.cmake) ----
set(_objlist "")
foreach(m ${STRATA_MODULES})
  string(APPEND _objlist "$<JOIN:$<TARGET_OBJECTS:strata_${m}>,\n>\n")
endforeach()
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/strata-objects.txt CONTENT "${_objlist}")
find_program(STRATA_LD NAMES ld ld.bfd REQUIRED)
find_program(STRATA_OBJCOPY NAMES objcopy REQUIRED)
find_program(STRATA_NM NAMES nm REQUIRED)
set(_dist_a ${CMAKE_BINARY_DIR}/libstrata.a)
add_custom_command(OUTPUT ${_dist_a}
  COMMAND ${CMAKE_COMMAND} -DNM=${STRATA_NM} -DLD=${STRATA_LD} -DOBJCOPY=${STRATA_OBJCOPY}
    -DAR=${CMAKE_AR} -DSHARED=$<TARGET_FILE:strata_shared>
    -DOBJLIST=${CMAKE_BINARY_DIR}/strata-objects.txt -DWORK=${CMAKE_BINARY_DIR}/localize
    -DOUT=${_dist_a} -P ${CMAKE_SOURCE_DIR}/cmake/localize.cmake
  DEPENDS strata_shared ${CMAKE_SOURCE_DIR}/cmake/localize.cmake
    ${CMAKE_BINARY_DIR}/strata-objects.txt
  COMMENT "libstrata.a: public symbols only"
  VERBATIM)
add_custom_target(strata_dist_static ALL DEPENDS ${_dist_a})

install(TARGETS strata_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${_dist_a} DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/strata DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY data/ DESTINATION ${CMAKE_INSTALL_DATADIR}/strata)

# ---- pkg-config ----
# ${pcfiledir} is <libdir>/pkgconfig; the prefix is the relative way back
# from it, so libdir/includedir/datadir hold no configured prefix.
function(_strata_rel var from to)
  if(IS_ABSOLUTE "${to}")
    set(_to "${to}")
  else()
    set(_to "${CMAKE_INSTALL_PREFIX}/${to}")
  endif()
  file(RELATIVE_PATH _r "${from}" "${_to}")
  string(REGEX REPLACE "/$" "" _r "${_r}")
  if(_r STREQUAL "")
    set(_r ".")
  endif()
  set(${var} "${_r}" PARENT_SCOPE)
endfunction()
function(_strata_pc_dir var dir)
  if(IS_ABSOLUTE "${dir}")
    set(${var} "${dir}" PARENT_SCOPE)
  else()
    set(${var} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
set(_pcdir "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig")
_strata_rel(PC_TO_PREFIX "${_pcdir}" "${CMAKE_INSTALL_PREFIX}")
_strata_pc_dir(PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
_strata_pc_dir(PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
_strata_pc_dir(PC_DATADIR "${CMAKE_INSTALL_DATADIR}/strata")
configure_file(cmake/strata.pc.in ${CMAKE_BINARY_DIR}/strata.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/strata.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# ---- CMake package: find_package(strata) ----
include(CMakePackageConfigHelpers)
set(_cfgdir "${CMAKE_INSTALL_LIBDIR}/cmake/strata")
_strata_rel(CFG_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/cmake/strata" "${CMAKE_INSTALL_PREFIX}")
configure_file(cmake/strataConfig.cmake.in ${CMAKE_BINARY_DIR}/strataConfig.cmake @ONLY)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/strataConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/strataConfig.cmake ${CMAKE_BINARY_DIR}/strataConfigVersion.cmake
  DESTINATION ${_cfgdir})
