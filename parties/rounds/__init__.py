"""What every protocol shares: the roster, the transcript store, round outcomes, privacy ledgers."""
