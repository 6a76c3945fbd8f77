# The two set-up commands; scripts/dev.sh does the work.
.PHONY: run test install

run:
	@sh scripts/dev.sh run

test:
	@sh scripts/dev.sh test $(ARGS)

install:
	@sh scripts/dev.sh install
