"""pilid.experiments"""
