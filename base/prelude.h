/*
 * prelude.h - included before every cadre translation unit (-include).
 *
 * It pulls in the libc headers that declare the functions STYLE.md bans and
 * then poisons those names, so that any later use of strcpy, strcat,
 * sprintf, strtok, gets or atoi is a compile error. Macros that system
 * headers defined before the poison are unaffected, which is what we want.
 */
#ifndef CADRE_PRELUDE_H
#define CADRE_PRELUDE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC poison strcpy strcat sprintf vsprintf strtok gets atoi

#endif
