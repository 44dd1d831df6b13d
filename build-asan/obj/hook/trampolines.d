build-asan/obj/hook/trampolines.o: src/hook/trampolines.S \
 src/hook/unknown_slots.h
src/hook/unknown_slots.h:
