"""The secure multi-party computation protocol (issue 14): MPyC compute servers release the central mechanism."""
