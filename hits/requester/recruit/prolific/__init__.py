"""Prolific (prolific.com): the client hitforge uses, its wire shapes, and a stand-in of its API."""
