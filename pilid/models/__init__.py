"""pilid.models"""
