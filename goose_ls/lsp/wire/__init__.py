"""The LSP wire under the features: pygls' protocol with goose-ls's additions, batched
writes, and document changes put in version order."""
