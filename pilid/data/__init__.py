"""pilid.data"""
