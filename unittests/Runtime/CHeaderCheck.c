/*===- CHeaderCheck.c - dyncc_runtime.h compiles as C -------------*- C -*-===*\
|*                                                                            *|
|* Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.         *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* Compiled as C into the test binary so that the C API header stays pure     *|
|* C; SessionTest calls dyncc_test_c_api_version through it.                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "dyncc/Runtime/dyncc_runtime.h"

const char *dyncc_test_c_api_version(void);

const char *dyncc_test_c_api_version(void) {
  dyncc_status status = DYNCC_OK;
  (void)status;
  return dyncc_runtime_version();
}
