"""The trusted curator (001, the central model): sealed ballots in, one optimal central release out."""
