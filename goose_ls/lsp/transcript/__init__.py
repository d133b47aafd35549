"""Transcript documents: a markdown file per session, streamed into the editor by edits."""
