"""Games as the engines played them: the referee, game records (PDN) and the bridge's trace."""
