/*
 * How many barrier trampolines there are: trampolines.S generates that many
 * slots and their table from this one number, and unknown.c hands them out.
 * Plain number only: the assembler reads this file too.
 */
#ifndef AG_UNKNOWN_SLOTS_H
#define AG_UNKNOWN_SLOTS_H

#define AG_UNKNOWN_SLOTS 64

#endif
