# shellcheck shell=bash
# harness/ue demo: build, boot, and run the user_events sample while its
# event is enabled, showing what the tracer records.

cmd_demo() {
	once cmd_deps
	once cmd_build
	if ! compgen -G "$SAMPLES_DIR/*" >/dev/null; then
		log "demo: the series has no samples/user_events program yet: nothing to show"
		return 0
	fi
	lock_cache shared
	cmd_run --timeout "$UE_TIMEOUT" -- "$HARNESS_DIR/guest-demo"
}
