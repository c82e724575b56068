# cmake -P cmake/localize.cmake: the installed static library, libstrata.a,
# with only the public API global, so a program that links it statically
# may define its own util_malloc or topo_route without a clash.
#
# The module objects are linked into one relocatable object (ld -r), whose
# global symbols other than the shared library's exported ones (STRATA_API:
# the dynamic symbols of libstrata.so) are then made local (objcopy
# --keep-global-symbols). Static and shared libraries export the same set.
# Inputs (-D): NM, LD, OBJCOPY, AR, SHARED (libstrata.so), OBJLIST (a file
# naming the objects, one per line), WORK (a scratch directory), OUT.
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${NM}" -D --defined-only "${SHARED}"
  OUTPUT_VARIABLE _syms RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "localize: ${NM} -D ${SHARED} failed")
endif()
string(REGEX MATCHALL "[^\n]+" _lines "${_syms}")
set(_public "")
foreach(_l ${_lines})
  # "<address> <type> <name>": the public names are strata_* (STYLE.md)
  if(_l MATCHES " [A-Za-z] (strata_[A-Za-z0-9_]*)$")
    string(APPEND _public "${CMAKE_MATCH_1}\n")
  endif()
endforeach()
if(_public STREQUAL "")
  message(FATAL_ERROR "localize: no strata_* symbol exported by ${SHARED}")
endif()
file(WRITE "${WORK}/public.txt" "${_public}")
file(STRINGS "${OBJLIST}" _objs)
execute_process(COMMAND "${LD}" -r -o "${WORK}/strata.o" ${_objs} RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "localize: ${LD} -r failed")
endif()
execute_process(COMMAND "${OBJCOPY}" "--keep-global-symbols=${WORK}/public.txt"
  "${WORK}/strata.o" "${WORK}/strata-local.o" RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "localize: ${OBJCOPY} --keep-global-symbols failed")
endif()
file(REMOVE "${OUT}")
execute_process(COMMAND "${AR}" rcs "${OUT}" "${WORK}/strata-local.o" RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "localize: ${AR} failed")
endif()
