# The two set-up commands (run, test); scripts/dev.sh does the work of each.
.PHONY: run test test-fast install lock db-stop

run:
	@sh scripts/dev.sh run

test:
	@sh scripts/dev.sh test $(ARGS)

test-fast:
	@sh scripts/dev.sh test-fast $(ARGS)

install:
	@sh scripts/dev.sh install

lock:
	@sh scripts/dev.sh lock

db-stop:
	@sh scripts/dev.sh db-stop
