"""pilid.train"""
