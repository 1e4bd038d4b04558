"""Storage backends: where the vault's bytes live (local folder, GitHub repository)."""
